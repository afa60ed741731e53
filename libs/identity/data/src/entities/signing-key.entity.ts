import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, Unique } from 'typeorm';

/** Token signing keys of apps/auth: the private JWK is SecretBox ciphertext, the public JWK is served at /jwks. */
@Entity({ name: 'signing_keys' })
@Unique('uq_signing_keys_kid', ['kid'])
export class SigningKey {
  @PrimaryGeneratedColumn('uuid', { primaryKeyConstraintName: 'pk_signing_keys' })
  id: string;

  @Column('text')
  kid: string;

  @Column('text')
  alg: string;

  @Column('text', { default: 'sig' })
  use: string;

  @Column('text', { name: 'private_jwk_enc' })
  privateJwkEnc: string;

  @Column('jsonb', { name: 'public_jwk' })
  publicJwk: Record<string, unknown>;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column('timestamptz', { name: 'rotated_at', nullable: true })
  rotatedAt: Date | null;

  @Column('timestamptz', { name: 'expires_at', nullable: true })
  expiresAt: Date | null;
}
