/** Every TypeORM entity of apps/identity (the drift test compares them with the migrations). */
export const identityEntities = [];
