import { Db } from '@gatehouse/db';
import { Inject, Injectable } from '@nestjs/common';
import { defineRecord, parseReadQuery, pickFields } from '@gatehouse/query';
import type { Actor } from '../common/actor.js';
import type { Environment, UpdateSettingsDto } from './dto/settings.dto.js';

export const settingsSpec = defineRecord({
  name: 'settings',
  attributes: [{ name: 'environment', column: 's.environment', type: 'string' }],
});

export interface SettingsRecord {
  environment: Environment;
}

/** The one settings row of the tree manager (created by the migration). */
@Injectable()
export class SettingsService {
  constructor(@Inject(Db) private readonly db: Db) {}

  async get(query: Record<string, unknown>): Promise<Partial<SettingsRecord>> {
    const read = parseReadQuery(query, settingsSpec, 'v1');
    return this.db.connection(async (sql) => {
      const row = await sql.one<SettingsRecord>(`SELECT environment FROM tree_settings WHERE id = 1`);
      return pickFields({ environment: row!.environment }, read.fields);
    });
  }

  /** `environment` absent: back to the default `development`. */
  async update(
    dto: UpdateSettingsDto,
    actor: Actor,
    query: Record<string, unknown>,
  ): Promise<Partial<SettingsRecord>> {
    const read = parseReadQuery(query, settingsSpec, 'v1');
    return this.db.connection(async (sql) => {
      const row = await sql.one<SettingsRecord>(
        `UPDATE tree_settings SET environment = $1, updated_by = $2, updated_at = now() WHERE id = 1 RETURNING environment`,
        [dto.environment ?? 'development', actor.id],
      );
      return pickFields({ environment: row!.environment }, read.fields);
    });
  }
}
