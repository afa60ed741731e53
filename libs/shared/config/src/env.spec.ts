import { ConfigError, describeConfig, env, loadEnv } from './env.js';
import { commonEnv, parseRateLimitOverrides } from './common.js';

const schema = {
  PORT: env.int({ default: 3000, min: 1, max: 65535, description: 'port' }),
  DATABASE_URL: env.url({
    optional: true,
    secret: true,
    protocols: ['postgres', 'postgresql'],
    description: 'db',
  }),
  SECRET_KEY: env.str({ secret: true, minLength: 8, description: 'key' }),
  DEBUG: env.bool({ default: false, description: 'debug' }),
  MODE: env.oneOf(['a', 'b'] as const, { default: 'a', description: 'mode' }),
};

describe('loadEnv', () => {
  it('applies defaults and parses types', () => {
    const c = loadEnv(schema, { SECRET_KEY: 'abcdefgh', DEBUG: 'true' });
    expect(c).toEqual({
      PORT: 3000,
      DATABASE_URL: undefined,
      SECRET_KEY: 'abcdefgh',
      DEBUG: true,
      MODE: 'a',
    });
  });

  it('names the variable and the value in one line', () => {
    expect(() => loadEnv(schema, { SECRET_KEY: 'abcdefgh', PORT: 'abc' })).toThrow(
      new ConfigError("Invalid environment variable PORT: must be an integer, got 'abc'"),
    );
    expect(() => loadEnv(schema, { SECRET_KEY: 'abcdefgh', PORT: '70000' })).toThrow(
      /PORT: must be <= 65535/,
    );
    expect(() => loadEnv(schema, { SECRET_KEY: 'abcdefgh', MODE: 'c' })).toThrow(/MODE: must be one of a, b/);
    expect(() => loadEnv(schema, {})).toThrow(/Missing required environment variable SECRET_KEY/);
  });

  it('never echoes a secret value', () => {
    let message = '';
    try {
      loadEnv(schema, { SECRET_KEY: 'abcdefgh', DATABASE_URL: 'mysql://user:hunter2@db/x' });
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toContain('DATABASE_URL');
    expect(message).not.toContain('hunter2');
    const c = loadEnv(schema, { SECRET_KEY: 'hunter2hunter2' });
    expect(JSON.stringify(describeConfig(schema, c))).not.toContain('hunter2');
  });

  it('parses rate-limit overrides', () => {
    expect(parseRateLimitOverrides('POST /token=300, GET /api/v1/clients=5')).toEqual({
      'POST /token': 300,
      'GET /api/v1/clients': 5,
    });
    expect(() => parseRateLimitOverrides('nonsense')).toThrow(/RATE_LIMIT_OVERRIDES/);
  });

  it('hole 6: one noisy address blocks everyone behind it: TRUST_PROXY is false, a hop count or proxy addresses', () => {
    const trust = (raw?: string) =>
      loadEnv(commonEnv, raw === undefined ? {} : { TRUST_PROXY: raw }).TRUST_PROXY;
    expect(trust()).toBe(false);
    expect(trust('false')).toBe(false);
    expect(trust('0')).toBe(false);
    expect(trust('2')).toBe(2);
    expect(trust('10.0.0.0/8, 192.0.2.7,loopback, fd00::/8')).toEqual([
      '10.0.0.0/8',
      '192.0.2.7',
      'loopback',
      'fd00::/8',
    ]);
    // trusting every hop would take the client's own X-Forwarded-For entry as its address
    expect(() => trust('true')).toThrow(/TRUST_PROXY: must be false, a hop count or a list/);
    expect(() => trust('10.0.0.0/33')).toThrow(/bad prefix length/);
    expect(() => trust('proxy.internal')).toThrow(/not an IP address or CIDR range/);
  });
});
