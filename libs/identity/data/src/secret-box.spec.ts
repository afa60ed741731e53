import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { inspect } from 'node:util';
import { createCipheriv, createHash, randomBytes } from 'node:crypto';
import { loadSecretBox, parseKey, SecretBox, SecretBoxError, sealedIn } from './secret-box.js';

const key = () => randomBytes(32);
/** Where the values of these tests are stored (the AES-GCM additional data). */
const B = 'clients.client_secret_enc:3f0c2d9e-8a51-4c3e-9a0b-2b6d1f4e7a10';

describe('SecretBox', () => {
  it('round-trips text, with a fresh IV every time', () => {
    const box = new SecretBox(key());
    const secret = 'client-secret-ü-🔑';
    const a = box.encrypt(secret, B);
    const b = box.encrypt(secret, B);
    expect(a).not.toEqual(b);
    expect(a).not.toContain(secret);
    expect(a.startsWith(`gh2.${box.keyId}.`)).toBe(true);
    expect(box.decrypt(a, B)).toBe(secret);
    expect(box.decrypt(b, B)).toBe(secret);
    expect(box.decrypt(box.encrypt('', B), B)).toBe('');
    expect(box.encryptNullable(null, B)).toBeNull();
    expect(box.decryptNullable(box.encryptNullable('x', B), B)).toBe('x');
  });

  it('detects tampering with any part of the ciphertext', () => {
    const box = new SecretBox(key());
    const sealed = box.encrypt('top secret value', B);
    const parts = sealed.split('.');
    const flip = (s: string) => {
      const buf = Buffer.from(s, 'base64url');
      buf[0] ^= 0x01;
      return buf.toString('base64url');
    };
    for (const i of [2, 3, 4]) {
      const forged = [...parts];
      forged[i] = flip(forged[i]);
      expect(() => box.decrypt(forged.join('.'), B)).toThrow(SecretBoxError);
    }
    expect(() => box.decrypt(sealed.slice(0, -2), B)).toThrow(SecretBoxError);
    expect(() => box.decrypt('plaintext', B)).toThrow('not a sealed secret');
  });

  it('refuses a ciphertext of another key and names only the key id', () => {
    const a = new SecretBox(key());
    const b = new SecretBox(key());
    const sealed = a.encrypt('hunter2', B);
    expect(() => b.decrypt(sealed, B)).toThrow(`unknown key (kid ${a.keyId})`);
    // Same kid, different key material (forged header): authentication fails.
    const forged = sealed.replace(`.${a.keyId}.`, `.${b.keyId}.`);
    expect(() => b.decrypt(forged, B)).toThrow('failed authentication');
  });

  it('reads ciphertexts of previous keys after a rotation and seals with the current one', () => {
    const oldKey = key();
    const oldBox = new SecretBox(oldKey);
    const sealedOld = oldBox.encrypt('kept', B);
    const rotated = new SecretBox(key(), [oldKey]);
    expect(rotated.decrypt(sealedOld, B)).toBe('kept');
    expect(rotated.encrypt('new', B).split('.')[1]).toBe(rotated.keyId);
    expect(rotated.keyId).not.toBe(oldBox.keyId);
  });

  it('binds a value to where it is stored: opened for another row or column it fails authentication', () => {
    const box = new SecretBox(key());
    const a = '3f0c2d9e-8a51-4c3e-9a0b-2b6d1f4e7a10';
    const b = '0b6f2c1e-2d7a-4f63-8f0e-9a5b4c3d2e1f';
    const sealed = box.encrypt('s3cret', sealedIn.clientSecret(a));
    expect(box.decrypt(sealed, sealedIn.clientSecret(a.toUpperCase()))).toBe('s3cret');
    expect(() => box.decrypt(sealed, sealedIn.clientSecret(b))).toThrow('failed authentication');
    expect(() => box.decrypt(sealed, sealedIn.resourceSigningSecret(a))).toThrow('failed authentication');
  });

  it('opens the unbound gh1 format of earlier releases only in a box accepting it (the re-seal)', () => {
    const k = key();
    const iv = randomBytes(12);
    const c = createCipheriv('aes-256-gcm', k, iv);
    const body = Buffer.concat([c.update('old one', 'utf8'), c.final()]);
    const kid = createHash('sha256').update(k).digest('hex').slice(0, 8);
    const old = ['gh1', kid, iv, body, c.getAuthTag()]
      .map((p) => (typeof p === 'string' ? p : p.toString('base64url')))
      .join('.');
    const box = new SecretBox(k);
    expect(() => box.decrypt(old, B)).toThrow('not re-sealed yet');
    expect(box.acceptingUnbound().decrypt(old, B)).toBe('old one');
  });

  it('never shows key material when logged', () => {
    const k = key();
    const box = new SecretBox(k);
    const shown = inspect(box) + JSON.stringify({ box }) + String(JSON.stringify(box));
    expect(shown).not.toContain(k.toString('base64'));
    expect(shown).not.toContain(k.toString('hex'));
    expect(shown).toContain(box.keyId);
  });

  it('parses base64 and base64url keys of exactly 32 bytes', () => {
    const k = key();
    expect(parseKey(k.toString('base64')).equals(k)).toBe(true);
    expect(parseKey(k.toString('base64url')).equals(k)).toBe(true);
    expect(() => parseKey(randomBytes(16).toString('base64'), 'SECRET_ENCRYPTION_KEY')).toThrow(
      'SECRET_ENCRYPTION_KEY must be base64 of 32 bytes, got 16 bytes',
    );
    expect(() => parseKey('not base64!')).toThrow(SecretBoxError);
  });
});

describe('loadSecretBox', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'gh-secretbox-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('uses SECRET_ENCRYPTION_KEY when set and writes no file', () => {
    const k = key();
    const { box, source } = loadSecretBox({ SECRET_ENCRYPTION_KEY: k.toString('base64'), DATA_DIR: dir });
    expect(source).toBe('env');
    expect(box.decrypt(new SecretBox(k).encrypt('x', B), B)).toBe('x');
    expect(() => statSync(path.join(dir, 'secret.key'))).toThrow();
  });

  it('generates DATA_DIR/secret.key (0600) on first start and reads the same key afterwards', () => {
    const dataDir = path.join(dir, 'nested', 'data');
    const first = loadSecretBox({ DATA_DIR: dataDir });
    expect(first.source).toBe('generated');
    const file = path.join(dataDir, 'secret.key');
    expect(first.keyFile).toBe(file);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(parseKey(readFileSync(file, 'utf8'))).toHaveLength(32);

    const sealed = first.box.encrypt('persisted', B);
    const second = loadSecretBox({ DATA_DIR: dataDir });
    expect(second.source).toBe('file');
    expect(second.box.keyId).toBe(first.box.keyId);
    expect(second.box.decrypt(sealed, B)).toBe('persisted');
  });

  it('accepts previous keys for decryption', () => {
    const old = key();
    const sealed = new SecretBox(old).encrypt('old', B);
    const { box } = loadSecretBox({
      SECRET_ENCRYPTION_KEY: key().toString('base64'),
      SECRET_ENCRYPTION_PREVIOUS_KEYS: ` ${key().toString('base64')}, ${old.toString('base64')} `,
      DATA_DIR: dir,
    });
    expect(box.decrypt(sealed, B)).toBe('old');
  });

  it('refuses a corrupt key file instead of silently replacing it', () => {
    writeFileSync(path.join(dir, 'secret.key'), 'short\n');
    expect(() => loadSecretBox({ DATA_DIR: dir })).toThrow(/secret\.key must be base64 of 32 bytes/);
  });
});
