import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { isoCBOR } from '@simplewebauthn/server/helpers';
import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/server';

const b64u = (b: Uint8Array | Buffer) => Buffer.from(b).toString('base64url');
const sha256 = (b: Uint8Array | Buffer | string) => createHash('sha256').update(b).digest();

/**
 * A WebAuthn authenticator in software (ES256, attestation `none`, a discoverable credential), for tests that speak
 * to the server's ceremonies without a browser: it signs what a real authenticator signs (authenticator data, the
 * hash of the client data), so @simplewebauthn/server checks it as it checks Chromium's. Its counter, origin and
 * flags can be set wrong on purpose.
 */
export class SoftAuthenticator {
  readonly credentialId = randomBytes(16);
  private readonly key: KeyObject;
  private readonly publicJwk: { x: string; y: string };
  counter = 0;
  userHandle: string | undefined;

  constructor(readonly origin: string) {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    this.key = privateKey;
    this.publicJwk = publicKey.export({ format: 'jwk' }) as { x: string; y: string };
  }

  get id(): string {
    return b64u(this.credentialId);
  }

  private authData(rpId: string, flags: number, attested?: Uint8Array): Buffer {
    const counter = Buffer.alloc(4);
    counter.writeUInt32BE(this.counter);
    return Buffer.concat([sha256(rpId), Buffer.from([flags]), counter, ...(attested ? [attested] : [])]);
  }

  private clientData(type: string, challenge: string, origin: string): Buffer {
    return Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }));
  }

  /** The answer to creation options (user presence and verification, counter as set). */
  register(
    options: PublicKeyCredentialCreationOptionsJSON,
    o: { origin?: string } = {},
  ): RegistrationResponseJSON {
    this.userHandle = options.user.id;
    const cose = new Map<number, number | Uint8Array>([
      [1, 2],
      [3, -7],
      [-1, 1],
      [-2, Buffer.from(this.publicJwk.x, 'base64url')],
      [-3, Buffer.from(this.publicJwk.y, 'base64url')],
    ]);
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(this.credentialId.length);
    const attested = Buffer.concat([
      Buffer.alloc(16),
      idLength,
      this.credentialId,
      Buffer.from(isoCBOR.encode(cose)),
    ]);
    const authData = this.authData(options.rp.id!, 0x45, attested); // UP, UV, AT
    const attestationObject = isoCBOR.encode(
      new Map<string, unknown>([
        ['fmt', 'none'],
        ['attStmt', new Map()],
        ['authData', authData],
      ]) as Parameters<typeof isoCBOR.encode>[0],
    );
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key',
      response: {
        clientDataJSON: b64u(this.clientData('webauthn.create', options.challenge, o.origin ?? this.origin)),
        attestationObject: b64u(attestationObject),
        transports: ['internal'],
      },
      clientExtensionResults: {},
    };
  }

  /** An assertion for request options (the counter moves on first unless `counter` is given). */
  assert(
    options: Pick<PublicKeyCredentialRequestOptionsJSON, 'challenge' | 'rpId'>,
    o: {
      origin?: string;
      counter?: number;
      badSignature?: boolean;
      userHandle?: string | null;
      /** false: user presence only, no user verification (UV flag clear). */
      userVerified?: boolean;
    } = {},
  ): AuthenticationResponseJSON {
    if (o.counter === undefined) this.counter += 1;
    else this.counter = o.counter;
    const authData = this.authData(options.rpId!, o.userVerified === false ? 0x01 : 0x05); // UP (and UV)
    const clientData = this.clientData('webauthn.get', options.challenge, o.origin ?? this.origin);
    let signature = sign('sha256', Buffer.concat([authData, sha256(clientData)]), this.key);
    if (o.badSignature) signature = sign('sha256', randomBytes(32), this.key);
    const handle = o.userHandle === undefined ? this.userHandle : (o.userHandle ?? undefined);
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key',
      response: {
        clientDataJSON: b64u(clientData),
        authenticatorData: b64u(authData),
        signature: b64u(signature),
        ...(handle ? { userHandle: handle } : {}),
      },
      clientExtensionResults: {},
    };
  }
}
