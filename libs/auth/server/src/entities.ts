import { identityEntities } from '@gatehouse/identity-data';

/** Every TypeORM entity of apps/auth: the identity tables it reads and its own (oidc_payloads, signing_keys). */
export const authEntities = [...identityEntities];
