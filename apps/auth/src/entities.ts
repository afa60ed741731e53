/** Every TypeORM entity of apps/auth (the drift test compares them with the migrations). */
export const authEntities = [];
