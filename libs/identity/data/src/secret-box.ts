import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from 'node:crypto';
import { chmodSync, linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** Sealed bound to its place (table, column, row): the binding is AES-GCM's additional data. */
const VERSION = 'gh2';
/** The earlier format, bound to nothing: opened only by the re-seal at start (see resealUnboundSecrets). */
const UNBOUND_VERSION = 'gh1';
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** Thrown when a ciphertext is malformed, was made with an unknown key, or was tampered with. The message names no secret. */
export class SecretBoxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SecretBoxError';
  }
}

/** Key id: the first 8 hex digits of SHA-256 over the key, so a ciphertext names the key that sealed it. */
export function keyId(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 8);
}

/** Decode a base64 (or base64url) key of exactly 32 bytes; `name` is used in the error message. */
export function parseKey(raw: string, name = 'key'): Buffer {
  const trimmed = raw.trim();
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(trimmed))
    throw new SecretBoxError(`${name} must be base64 of 32 bytes`);
  const key = Buffer.from(trimmed.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  if (key.length !== KEY_BYTES)
    throw new SecretBoxError(`${name} must be base64 of 32 bytes, got ${key.length} bytes`);
  return key;
}

/**
 * Where a sealed value lives, its AES-GCM additional data: a value copied into another row or column (by someone who
 * can write the table but not read the key) no longer opens there. Ids are UUIDs, compared lower-case.
 */
export const sealedIn = {
  clientSecret: (clientId: string) => `clients.client_secret_enc:${clientId.toLowerCase()}`,
  resourceSigningSecret: (resourceId: string) => `resources.signing_secret_enc:${resourceId.toLowerCase()}`,
  identityProviderSecret: (providerId: string) =>
    `tenant_identity_providers.client_secret_enc:${providerId.toLowerCase()}`,
  signingKey: (kid: string) => `signing_keys.private_jwk_enc:${kid}`,
  logStreamSecret: (streamId: string) => `log_streams.secret_enc:${streamId.toLowerCase()}`,
  totpSecret: (authenticatorId: string) => `user_authenticators.secret_enc:${authenticatorId.toLowerCase()}`,
};

/**
 * Secrets at rest: AES-256-GCM with a random 96-bit IV per message, bound to where they are stored.
 * Ciphertext format: `gh2.<kid>.<iv>.<ciphertext>.<tag>` (base64url parts), sealed with additional data naming its
 * table, column and row (`sealedIn`): opening it elsewhere fails authentication. `kid` selects the key on
 * decryption, so old keys can stay readable while new data is sealed with the current key (rotation: pass the old
 * keys as `previous`). The unbound `gh1.` format of earlier releases opens only in a box made by `acceptingUnbound()`
 * (the re-seal at start). Secrets never appear in error messages, and the box itself never logs.
 */
export class SecretBox {
  private readonly current: { id: string; key: Buffer };
  private readonly keys = new Map<string, Buffer>();

  constructor(
    currentKey: Buffer,
    private readonly previousKeys: Buffer[] = [],
    private readonly unbound: 'refuse' | 'accept' = 'refuse',
  ) {
    if (currentKey.length !== KEY_BYTES) throw new SecretBoxError(`key must be ${KEY_BYTES} bytes`);
    this.current = { id: keyId(currentKey), key: currentKey };
    for (const k of [currentKey, ...previousKeys]) {
      if (k.length !== KEY_BYTES) throw new SecretBoxError(`key must be ${KEY_BYTES} bytes`);
      this.keys.set(keyId(k), k);
    }
  }

  /** The same keys, also opening the unbound `gh1.` format (for re-sealing it, nothing else). */
  acceptingUnbound(): SecretBox {
    return new SecretBox(this.current.key, this.previousKeys, 'accept');
  }

  /**
   * Keys for another purpose (e.g. `cookies`), derived from the current key first and then the previous ones
   * (HMAC-SHA256 of the purpose): every replica derives the same ones, and a rotated key still verifies what its
   * predecessor signed.
   */
  derive(purpose: string): Buffer[] {
    const current = this.current.key;
    const others = [...this.keys.values()].filter((k) => k !== current);
    return [current, ...others].map((k) => createHmac('sha256', k).update(`gatehouse:${purpose}`).digest());
  }

  /** Id of the key new ciphertexts are sealed with. */
  get keyId(): string {
    return this.current.id;
  }

  /** Seal `plaintext` for the place `binding` names (see `sealedIn`). */
  encrypt(plaintext: string, binding: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.current.key, iv);
    cipher.setAAD(Buffer.from(binding, 'utf8'));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    const tag = cipher.getAuthTag();
    return [
      VERSION,
      this.current.id,
      iv.toString('base64url'),
      body.toString('base64url'),
      tag.toString('base64url'),
    ].join('.');
  }

  /** Open a value sealed for the place `binding` names; sealed for another place: SecretBoxError. */
  decrypt(sealed: string, binding: string): string {
    const parts = sealed.split('.');
    const bound = parts[0] === VERSION;
    const unbound = parts[0] === UNBOUND_VERSION && this.unbound === 'accept';
    if (parts.length !== 5 || !(bound || unbound)) {
      throw new SecretBoxError(
        parts[0] === UNBOUND_VERSION
          ? 'sealed in the unbound format: not re-sealed yet'
          : 'not a sealed secret',
      );
    }
    const [, kid, ivPart, bodyPart, tagPart] = parts;
    const key = this.keys.get(kid);
    if (!key) throw new SecretBoxError(`sealed with an unknown key (kid ${kid})`);
    const iv = Buffer.from(ivPart, 'base64url');
    const tag = Buffer.from(tagPart, 'base64url');
    if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) throw new SecretBoxError('not a sealed secret');
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
      decipher.setAuthTag(tag);
      if (bound) decipher.setAAD(Buffer.from(binding, 'utf8'));
      return Buffer.concat([decipher.update(Buffer.from(bodyPart, 'base64url')), decipher.final()]).toString(
        'utf8',
      );
    } catch {
      throw new SecretBoxError('sealed secret failed authentication (tampered or wrong key)');
    }
  }

  /** Encrypt, passing null/undefined through (nullable columns). */
  encryptNullable(plaintext: string | null | undefined, binding: string): string | null {
    return plaintext == null ? null : this.encrypt(plaintext, binding);
  }

  decryptNullable(sealed: string | null | undefined, binding: string): string | null {
    return sealed == null ? null : this.decrypt(sealed, binding);
  }

  /** Never print key material (console.log, util.inspect, JSON). */
  toJSON(): string {
    return `SecretBox(${this.current.id})`;
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return this.toJSON();
  }
}

export interface SecretBoxEnv {
  /** base64 of 32 bytes; when unset the key is generated into DATA_DIR/secret.key on first start. */
  SECRET_ENCRYPTION_KEY?: string;
  /** Comma-separated base64 keys still accepted for decryption (after a rotation). */
  SECRET_ENCRYPTION_PREVIOUS_KEYS?: string;
  DATA_DIR: string;
}

export interface LoadedSecretBox {
  box: SecretBox;
  /** Where the key came from: the environment, an existing key file, or a key file generated now. */
  source: 'env' | 'file' | 'generated';
  keyFile?: string;
}

/**
 * Read `DATA_DIR/secret.key`, or create it (mode 0600) when missing. Creation is atomic and race-free between
 * processes sharing DATA_DIR: the key is written to a private temporary file and hard-linked into place, which fails
 * if another process got there first; then everybody reads the one file that won.
 */
function readOrCreateKeyFile(dataDir: string): { key: Buffer; generated: boolean; file: string } {
  const file = path.resolve(dataDir, 'secret.key');
  try {
    return { key: parseKey(readFileSync(file, 'utf8'), file), generated: false, file };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  writeFileSync(tmp, `${randomBytes(KEY_BYTES).toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  chmodSync(tmp, 0o600);
  let generated = true;
  try {
    linkSync(tmp, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    generated = false;
  } finally {
    unlinkSync(tmp);
  }
  return { key: parseKey(readFileSync(file, 'utf8'), file), generated, file };
}

/** The SecretBox of this process, keyed by SECRET_ENCRYPTION_KEY or DATA_DIR/secret.key (see readOrCreateKeyFile). */
export function loadSecretBox(env: SecretBoxEnv): LoadedSecretBox {
  const previous = (env.SECRET_ENCRYPTION_PREVIOUS_KEYS ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((k, i) => parseKey(k, `SECRET_ENCRYPTION_PREVIOUS_KEYS[${i}]`));
  if (env.SECRET_ENCRYPTION_KEY) {
    return {
      box: new SecretBox(parseKey(env.SECRET_ENCRYPTION_KEY, 'SECRET_ENCRYPTION_KEY'), previous),
      source: 'env',
    };
  }
  const { key, generated, file } = readOrCreateKeyFile(env.DATA_DIR);
  return { box: new SecretBox(key, previous), source: generated ? 'generated' : 'file', keyFile: file };
}

/** Nest injection token of the process's SecretBox (`@Inject(SECRET_BOX) box: SecretBox`). */
export const SECRET_BOX = Symbol.for('gatehouse.SecretBox');
