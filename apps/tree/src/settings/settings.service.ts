import { Db } from '@gatehouse/db';
import { Inject, Injectable } from '@nestjs/common';
import { defineRecord } from '@gatehouse/query';
import type { Actor } from '../common/actor.js';
import type { InstanceKey } from '../common/instance.js';
import type { Environment, UpdateSettingsDto } from './dto/settings.dto.js';

export const settingsSpec = defineRecord({
  name: 'settings',
  attributes: [{ name: 'environment', column: 's.environment', type: 'string' }],
});

/** The environment of an instance that never set one (and what PATCH without `environment` sets). */
const DEFAULT_ENVIRONMENT: Environment = 'development';

export interface SettingsRecord {
  environment: Environment;
}

/**
 * The settings of the caller's instance: one row per instance (migration 1790000500000); an instance without a row
 * has the default settings, its first PATCH creates the row.
 */
@Injectable()
export class SettingsService {
  constructor(@Inject(Db) private readonly db: Db) {}

  async get(instance: InstanceKey): Promise<SettingsRecord> {
    return this.db.connection(async (sql) => {
      const [row] = await sql.read<SettingsRecord>(
        `SELECT environment FROM tree_settings WHERE instance_id = $1`,
        [instance],
      );
      return { environment: row?.environment ?? DEFAULT_ENVIRONMENT };
    });
  }

  /** `environment` absent: back to the default `development`. */
  async update(instance: InstanceKey, dto: UpdateSettingsDto, actor: Actor): Promise<SettingsRecord> {
    return this.db.connection(async (sql) => {
      const row = await sql.one<SettingsRecord>(
        `INSERT INTO tree_settings (instance_id, environment, updated_by) VALUES ($1, $2, $3)
         ON CONFLICT (instance_id)
         DO UPDATE SET environment = excluded.environment, updated_by = excluded.updated_by, updated_at = now()
         RETURNING environment`,
        [instance, dto.environment ?? DEFAULT_ENVIRONMENT, actor.id],
      );
      return { environment: row!.environment };
    });
  }
}
