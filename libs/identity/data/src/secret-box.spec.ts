import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { inspect } from 'node:util';
import { loadSecretBox, parseKey, SecretBox, SecretBoxError } from './secret-box.js';

const key = () => randomBytes(32);

describe('SecretBox', () => {
  it('round-trips text, with a fresh IV every time', () => {
    const box = new SecretBox(key());
    const secret = 'client-secret-ü-🔑';
    const a = box.encrypt(secret);
    const b = box.encrypt(secret);
    expect(a).not.toEqual(b);
    expect(a).not.toContain(secret);
    expect(a.startsWith(`gh1.${box.keyId}.`)).toBe(true);
    expect(box.decrypt(a)).toBe(secret);
    expect(box.decrypt(b)).toBe(secret);
    expect(box.decrypt(box.encrypt(''))).toBe('');
    expect(box.encryptNullable(null)).toBeNull();
    expect(box.decryptNullable(box.encryptNullable('x'))).toBe('x');
  });

  it('detects tampering with any part of the ciphertext', () => {
    const box = new SecretBox(key());
    const sealed = box.encrypt('top secret value');
    const parts = sealed.split('.');
    const flip = (s: string) => {
      const buf = Buffer.from(s, 'base64url');
      buf[0] ^= 0x01;
      return buf.toString('base64url');
    };
    for (const i of [2, 3, 4]) {
      const forged = [...parts];
      forged[i] = flip(forged[i]);
      expect(() => box.decrypt(forged.join('.'))).toThrow(SecretBoxError);
    }
    expect(() => box.decrypt(sealed.slice(0, -2))).toThrow(SecretBoxError);
    expect(() => box.decrypt('plaintext')).toThrow('not a sealed secret');
  });

  it('refuses a ciphertext of another key and names only the key id', () => {
    const a = new SecretBox(key());
    const b = new SecretBox(key());
    const sealed = a.encrypt('hunter2');
    expect(() => b.decrypt(sealed)).toThrow(`unknown key (kid ${a.keyId})`);
    // Same kid, different key material (forged header): authentication fails.
    const forged = sealed.replace(`.${a.keyId}.`, `.${b.keyId}.`);
    expect(() => b.decrypt(forged)).toThrow('failed authentication');
  });

  it('reads ciphertexts of previous keys after a rotation and seals with the current one', () => {
    const oldKey = key();
    const oldBox = new SecretBox(oldKey);
    const sealedOld = oldBox.encrypt('kept');
    const rotated = new SecretBox(key(), [oldKey]);
    expect(rotated.decrypt(sealedOld)).toBe('kept');
    expect(rotated.encrypt('new').split('.')[1]).toBe(rotated.keyId);
    expect(rotated.keyId).not.toBe(oldBox.keyId);
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
    expect(box.decrypt(new SecretBox(k).encrypt('x'))).toBe('x');
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

    const sealed = first.box.encrypt('persisted');
    const second = loadSecretBox({ DATA_DIR: dataDir });
    expect(second.source).toBe('file');
    expect(second.box.keyId).toBe(first.box.keyId);
    expect(second.box.decrypt(sealed)).toBe('persisted');
  });

  it('accepts previous keys for decryption', () => {
    const old = key();
    const sealed = new SecretBox(old).encrypt('old');
    const { box } = loadSecretBox({
      SECRET_ENCRYPTION_KEY: key().toString('base64'),
      SECRET_ENCRYPTION_PREVIOUS_KEYS: ` ${key().toString('base64')}, ${old.toString('base64')} `,
      DATA_DIR: dir,
    });
    expect(box.decrypt(sealed)).toBe('old');
  });

  it('refuses a corrupt key file instead of silently replacing it', () => {
    writeFileSync(path.join(dir, 'secret.key'), 'short\n');
    expect(() => loadSecretBox({ DATA_DIR: dir })).toThrow(/secret\.key must be base64 of 32 bytes/);
  });
});
