/**
 * Environment configuration: every service declares its variables once (name, type, default, whether it is a
 * secret, and a one-line description used by the README table), and `loadEnv` validates `process.env` into a
 * typed object at boot. A bad value throws a ConfigError whose message is one line naming the variable; secrets
 * are never echoed back, neither in errors nor by `describeConfig`.
 */

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

interface BaseVar<T> {
  kind: string;
  description: string;
  secret?: boolean;
  default?: T;
  optional?: boolean;
  parse(raw: string, name: string): T;
}

export type EnvVar<T> = BaseVar<T>;
export type EnvSchema = Record<string, EnvVar<unknown>>;
export type EnvOf<S extends EnvSchema> = {
  [K in keyof S]: S[K] extends EnvVar<infer T>
    ? S[K] extends { optional: true }
      ? T | undefined
      : T
    : never;
};

const fail = (name: string, what: string, raw: string, secret?: boolean): never => {
  throw new ConfigError(`Invalid environment variable ${name}: ${what}${secret ? '' : `, got '${raw}'`}`);
};

type Common<T> = { description: string; default?: T; optional?: boolean; secret?: boolean };

export const env = {
  str<T extends Common<string> & { pattern?: RegExp; minLength?: number }>(o: T) {
    return {
      kind: 'string',
      ...o,
      parse(raw: string, name: string) {
        if (o.minLength !== undefined && raw.length < o.minLength)
          fail(name, `must be at least ${o.minLength} characters`, raw, o.secret);
        if (o.pattern && !o.pattern.test(raw)) fail(name, `must match ${o.pattern}`, raw, o.secret);
        return raw;
      },
    } as EnvVar<string> & T;
  },
  int<T extends Common<number> & { min?: number; max?: number }>(o: T) {
    return {
      kind: 'integer',
      ...o,
      parse(raw: string, name: string) {
        if (!/^-?\d+$/.test(raw.trim())) fail(name, 'must be an integer', raw, o.secret);
        const n = Number(raw);
        if (o.min !== undefined && n < o.min) fail(name, `must be >= ${o.min}`, raw, o.secret);
        if (o.max !== undefined && n > o.max) fail(name, `must be <= ${o.max}`, raw, o.secret);
        return n;
      },
    } as EnvVar<number> & T;
  },
  bool<T extends Common<boolean>>(o: T) {
    return {
      kind: 'boolean',
      ...o,
      parse(raw: string, name: string) {
        const v = raw.trim().toLowerCase();
        if (['1', 'true', 'yes', 'on'].includes(v)) return true;
        if (['0', 'false', 'no', 'off'].includes(v)) return false;
        return fail(name, 'must be true or false', raw, o.secret);
      },
    } as EnvVar<boolean> & T;
  },
  url<T extends Common<string> & { protocols?: string[] }>(o: T) {
    return {
      kind: 'url',
      ...o,
      parse(raw: string, name: string) {
        let u: URL;
        try {
          u = new URL(raw);
        } catch {
          return fail(name, 'must be a URL', raw, o.secret);
        }
        if (o.protocols && !o.protocols.includes(u.protocol.replace(/:$/, ''))) {
          fail(name, `must use ${o.protocols.join(' or ')}`, raw, o.secret);
        }
        return raw;
      },
    } as EnvVar<string> & T;
  },
  oneOf<V extends string, T extends Common<V>>(values: readonly V[], o: T) {
    return {
      kind: values.join('|'),
      ...o,
      parse(raw: string, name: string) {
        if (!(values as readonly string[]).includes(raw))
          fail(name, `must be one of ${values.join(', ')}`, raw, o.secret);
        return raw as V;
      },
    } as EnvVar<V> & T;
  },
};

/** Validate `source` (default process.env) against the schema. Throws ConfigError naming the first bad variable. */
export function loadEnv<S extends EnvSchema>(schema: S, source: NodeJS.ProcessEnv = process.env): EnvOf<S> {
  const out: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(schema)) {
    const raw = source[name];
    if (raw === undefined || raw === '') {
      if (spec.default !== undefined) out[name] = spec.default;
      else if (spec.optional) out[name] = undefined;
      else throw new ConfigError(`Missing required environment variable ${name}: ${spec.description}`);
      continue;
    }
    out[name] = spec.parse(raw, name);
  }
  return out as EnvOf<S>;
}

/** A loggable view of the configuration: secrets replaced by '[redacted]'. */
export function describeConfig<S extends EnvSchema>(schema: S, values: EnvOf<S>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(schema)) {
    const v = (values as Record<string, unknown>)[name];
    out[name] = spec.secret && v !== undefined ? '[redacted]' : v;
  }
  return out;
}

/** Boot helper: load or print one clear line to stderr and exit 1. */
export function loadEnvOrExit<S extends EnvSchema>(schema: S, service: string): EnvOf<S> {
  try {
    return loadEnv(schema);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`[${service}] configuration error: ${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
}
