import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Instance admins (document 2's Instance `admins`): the users who administer an instance. An admin is a
 * user of that instance; deleting the user or the instance drops the link.
 *
 * `supported_locales` becomes enforced (the sign-in pages speak only an instance's supported languages); it was
 * seeded `["en"]` while nothing could change it and the pages spoke English and Mongolian, so that seeded value
 * becomes `["en", "mn"]`, keeping what the pages did.
 */
export class Instances1790000530000 implements MigrationInterface {
  name = 'Instances1790000530000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE instance_admins (
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        instance_id uuid NOT NULL,
        user_id uuid NOT NULL,
        created_by uuid,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_by uuid,
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT pk_instance_admins PRIMARY KEY (id),
        CONSTRAINT uq_instance_admins UNIQUE (instance_id, user_id),
        CONSTRAINT fk_instance_admins_instance FOREIGN KEY (instance_id) REFERENCES instances (id) ON DELETE CASCADE,
        CONSTRAINT fk_instance_admins_user FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
      )`);
    await q.query(`CREATE INDEX ix_instance_admins_user ON instance_admins (user_id)`);
    await q.query(
      `UPDATE instances SET settings = jsonb_set(settings, '{supported_locales}', '["en", "mn"]')
        WHERE settings->'supported_locales' = '["en"]'`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      `UPDATE instances SET settings = jsonb_set(settings, '{supported_locales}', '["en"]')
        WHERE settings->'supported_locales' = '["en", "mn"]'`,
    );
    await q.query(`DROP TABLE instance_admins`);
  }
}
