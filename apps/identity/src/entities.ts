import { identityEntities as dataEntities } from '@gatehouse/identity-data';

/** Every TypeORM entity of apps/identity (the drift test compares them with the migrations). */
export const identityEntities = [...dataEntities];
