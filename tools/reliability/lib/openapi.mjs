// Reading a service's live OpenAPI document: its operations, their parameters, bodies and documented statuses, and
// schema-driven sample values that a fuzzer can then break.

const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

/**
 * @typedef {object} Operation
 * @property {string} service
 * @property {string} method          lower case
 * @property {string} path            OpenAPI template, e.g. /api/v1/clients/{client_id}
 * @property {string[]} pathParams
 * @property {{ name: string; schema: any }[]} query
 * @property {{ contentTypes: string[]; schema: any } | undefined} body
 * @property {Set<number>} statuses   documented response statuses
 * @property {boolean} secured
 * @property {string[]} otherMethods  methods the path does not serve (for 405 probes)
 * @property {Record<string, any>} responseSchemas  per status, the JSON schema of the answer (resolved)
 * @property {Set<number>} htmlStatuses  statuses documented as an HTML page (browser endpoints)
 * @property {Record<string, any>} rawResponseSchemas  per status, the JSON schema as documented ($refs kept)
 * @property {any} components  the document's components (what the $refs name)
 */

/** Fetches `${baseUrl}/docs/openapi.json` and lists its operations. */
export async function loadDocument(baseUrl) {
  const res = await fetch(`${baseUrl}/docs/openapi.json`);
  if (res.status !== 200) throw new Error(`${baseUrl}/docs/openapi.json: ${res.status}`);
  return res.json();
}

/** Resolves `$ref`s (and allOf of one) of a schema against the document; cycles stop at depth 12. */
export function resolveSchema(doc, schema, depth = 0) {
  if (!schema || typeof schema !== 'object' || depth > 12) return schema ?? {};
  if (schema.$ref) {
    const name = schema.$ref.replace('#/components/schemas/', '');
    return resolveSchema(doc, doc.components?.schemas?.[name] ?? {}, depth + 1);
  }
  if (Array.isArray(schema.allOf) && schema.allOf.length === 1) {
    const { allOf, ...rest } = schema;
    return { ...resolveSchema(doc, allOf[0], depth + 1), ...rest };
  }
  const out = { ...schema };
  if (out.properties) {
    out.properties = Object.fromEntries(
      Object.entries(out.properties).map(([k, v]) => [k, resolveSchema(doc, v, depth + 1)]),
    );
  }
  if (out.items) out.items = resolveSchema(doc, out.items, depth + 1);
  if (Array.isArray(out.oneOf)) out.oneOf = out.oneOf.map((s) => resolveSchema(doc, s, depth + 1));
  if (Array.isArray(out.anyOf)) out.anyOf = out.anyOf.map((s) => resolveSchema(doc, s, depth + 1));
  if (out.additionalProperties && typeof out.additionalProperties === 'object') {
    out.additionalProperties = resolveSchema(doc, out.additionalProperties, depth + 1);
  }
  return out;
}

/** @returns {Operation[]} */
export function listOperations(service, doc) {
  const ops = [];
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    const served = METHODS.filter((m) => item[m]);
    for (const method of served) {
      const op = item[method];
      const params = [...(item.parameters ?? []), ...(op.parameters ?? [])];
      const content = op.requestBody?.content ?? {};
      const contentTypes = Object.keys(content);
      const jsonSchema = content['application/json']?.schema ?? content[contentTypes[0]]?.schema;
      ops.push({
        service,
        method,
        path,
        pathParams: params.filter((p) => p.in === 'path').map((p) => p.name),
        query: params
          .filter((p) => p.in === 'query')
          .map((p) => ({ name: p.name, schema: resolveSchema(doc, p.schema) })),
        body: contentTypes.length ? { contentTypes, schema: resolveSchema(doc, jsonSchema) } : undefined,
        statuses: new Set(Object.keys(op.responses ?? {}).map(Number)),
        secured: Array.isArray(op.security) ? op.security.length > 0 : Array.isArray(doc.security),
        otherMethods: METHODS.filter((m) => !item[m]),
        htmlStatuses: new Set(
          Object.entries(op.responses ?? {})
            .filter(([, r]) => r?.content?.['text/html'])
            .map(([status]) => Number(status)),
        ),
        components: doc.components ?? {},
        rawResponseSchemas: Object.fromEntries(
          Object.entries(op.responses ?? {}).map(([status, r]) => [
            status,
            r?.content?.['application/json']?.schema,
          ]),
        ),
        responseSchemas: Object.fromEntries(
          Object.entries(op.responses ?? {}).map(([status, r]) => [
            status,
            r?.content?.['application/json']?.schema
              ? resolveSchema(doc, r.content['application/json'].schema)
              : undefined,
          ]),
        ),
      });
    }
  }
  return ops;
}

/** A plausible valid value for a (resolved) schema; `ids` gives values for uuid fields by name. */
export function sampleValue(schema, name = '', ids = {}, depth = 0) {
  if (!schema || depth > 6) return null;
  if (schema.example !== undefined) return schema.example;
  if (Array.isArray(schema.enum) && schema.enum.length) return schema.enum[0];
  if (schema.oneOf?.length) return sampleValue(schema.oneOf[0], name, ids, depth + 1);
  if (schema.anyOf?.length) return sampleValue(schema.anyOf[0], name, ids, depth + 1);
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  switch (type) {
    case 'object':
    case undefined: {
      if (!schema.properties) return type === 'object' ? {} : 'x';
      const out = {};
      for (const [k, v] of Object.entries(schema.properties)) {
        if ((schema.required ?? []).includes(k) || depth === 0) out[k] = sampleValue(v, k, ids, depth + 1);
      }
      return out;
    }
    case 'array':
      return [sampleValue(schema.items, name, ids, depth + 1)];
    case 'integer':
    case 'number':
      return Math.max(schema.minimum ?? 1, 1);
    case 'boolean':
      return true;
    case 'string': {
      if (schema.format === 'uuid' || /(^|_)id$/.test(name))
        return ids[name] ?? '00000000-0000-4000-8000-000000000000';
      if (schema.format === 'date-time') return new Date(0).toISOString();
      if (schema.format === 'uri' || /url|uri/.test(name)) return 'https://example.test/cb';
      if (/email/.test(name)) return `fuzz-${Math.random().toString(36).slice(2, 10)}@example.test`;
      const base = `fuzz_${Math.random().toString(36).slice(2, 10)}`;
      return schema.maxLength && schema.maxLength < base.length ? base.slice(0, schema.maxLength) : base;
    }
    default:
      return null;
  }
}
