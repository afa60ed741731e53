// OpenAPI completeness: a live answer is checked against the schema its operation documents for
// that status, with ajv (JSON Schema 2020-12, as OpenAPI 3.1 uses). Objects are checked closed: a field the
// service answers but the document does not name is a finding too, as is a field typed otherwise than it is sent.
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

/** @type {any} */
const addFormats = addFormatsModule;

const OPENAPI_ONLY = [
  'example',
  'examples',
  'xml',
  'externalDocs',
  'discriminator',
  'deprecated',
  'readOnly',
  'writeOnly',
];

/** A copy of a resolved schema fit for ajv: OpenAPI-only keywords dropped, objects with properties closed. */
function strict(schema, depth = 0) {
  if (!schema || typeof schema !== 'object' || depth > 40) return schema;
  if (Array.isArray(schema)) return schema.map((s) => strict(s, depth + 1));
  const out = {};
  for (const [k, v] of Object.entries(schema)) {
    if (OPENAPI_ONLY.includes(k)) continue;
    if (k === 'properties') {
      out.properties = Object.fromEntries(Object.entries(v).map(([p, s]) => [p, strict(s, depth + 1)]));
    } else if (['items', 'additionalProperties', 'not'].includes(k) && typeof v === 'object') {
      out[k] = strict(v, depth + 1);
    } else if (['allOf', 'anyOf', 'oneOf'].includes(k)) {
      out[k] = v.map((s) => strict(s, depth + 1));
    } else out[k] = v;
  }
  if (out.properties && out.additionalProperties === undefined && !out.allOf && !out.anyOf && !out.oneOf) {
    out.additionalProperties = false;
  }
  return out;
}

export function createValidator() {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  addFormats(ajv);
  const cache = new Map();
  const componentsCache = new Map();
  return {
    /**
     * Problems of one answer: empty when it matches (or the operation documents no JSON schema for the status).
     * @param {import('./openapi.mjs').Operation} op
     * @param {number} status
     * @param {unknown} body
     */
    check(op, status, body) {
      const schema = op.rawResponseSchemas[String(status)];
      if (!schema) return [];
      const key = `${op.service} ${op.method} ${op.path} ${status}`;
      let validate = cache.get(key);
      if (!validate) {
        // The document's components travel with the schema, so its #/components/... references resolve.
        let components = componentsCache.get(op.components);
        if (!components) {
          components = {
            schemas: Object.fromEntries(
              Object.entries(op.components.schemas ?? {}).map(([name, s]) => [name, strict(s)]),
            ),
          };
          componentsCache.set(op.components, components);
        }
        validate = ajv.compile({ ...strict(schema), components });
        cache.set(key, validate);
      }
      if (validate(body)) return [];
      return (validate.errors ?? []).slice(0, 5).map((e) => {
        const extra = e.params?.additionalProperty ? ` '${e.params.additionalProperty}'` : '';
        return `answer does not match the document: ${e.instancePath || '/'} ${e.message}${extra}`;
      });
    },
  };
}
