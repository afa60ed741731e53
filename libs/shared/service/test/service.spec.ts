import { Controller, Get, Inject, Module, type DynamicModule } from '@nestjs/common';
import request from 'supertest';
import { Column, Entity, PrimaryGeneratedColumn, type MigrationInterface, type QueryRunner } from 'typeorm';
import { Public } from '@gatehouse/http';
import { Db, schemaDrift } from '@gatehouse/db';
import { createEmptyTestDatabase, type TestDatabase } from '@gatehouse/testing';
import { commonEnv, env as envVar, loadEnv } from '@gatehouse/config';
import {
  buildService,
  migrateService,
  ServiceCoreModule,
  type BuiltService,
  type ServiceDefinition,
} from '../src/index.js';

@Entity('widgets')
class Widget {
  @PrimaryGeneratedColumn('uuid') id: string;
  @Column({ type: 'text' }) name: string;
}

class CreateWidgets1700000000000 implements MigrationInterface {
  name = 'CreateWidgets1700000000000';
  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE widgets (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), name text NOT NULL)`);
  }
  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE widgets`);
  }
}

@Controller('widgets')
class WidgetsController {
  constructor(@Inject(Db) private readonly db: Db) {}
  @Public()
  @Get()
  async list() {
    const row = await this.db.one<{ n: number }>('SELECT count(*)::int AS n FROM widgets');
    return { count: row?.n };
  }
}

@Module({ controllers: [WidgetsController] })
class WidgetsModule {}

const schema = { WIDGET_DATABASE_URL: envVar.url({ description: 'db', secret: true }) };
let afterMigrateCalls = 0;
const definition: ServiceDefinition<typeof schema> = {
  name: 'tree',
  version: '9.9.9',
  envSchema: schema,
  port: () => 0,
  databaseUrl: (e) => e.WIDGET_DATABASE_URL,
  entities: [Widget],
  migrations: [CreateWidgets1700000000000],
  openapi: { title: 'Widgets', description: 'test service' },
  // the shared core module gives the already migrated database
  rootModule: (ctx): DynamicModule => ({
    module: class WidgetApp {},
    imports: [ServiceCoreModule.register(ctx), WidgetsModule],
  }),
  afterMigrate: async () => {
    afterMigrateCalls += 1;
  },
};

describe('buildService', () => {
  let db: TestDatabase;
  let built: BuiltService<{ WIDGET_DATABASE_URL: string }> | undefined;

  beforeAll(async () => {
    db = await createEmptyTestDatabase();
  });
  afterAll(async () => {
    await built?.close();
    await db.drop();
  });

  it('migrates, runs afterMigrate once, and serves health, docs and the app routes', async () => {
    const env = loadEnv({ ...commonEnv, ...schema }, { WIDGET_DATABASE_URL: db.url, LOG_LEVEL: 'silent' });
    built = await buildService(definition, env);
    expect(afterMigrateCalls).toBe(1);
    expect(
      await schemaDrift({ url: db.url, entities: definition.entities, migrations: definition.migrations }),
    ).toEqual([]);

    const server = built.app.getHttpServer();
    await request(server).get('/livez').expect(200);
    await request(server).get('/readyz').expect(200);
    await request(server).get('/widgets').expect(200, { count: 0 });
    const doc = await request(server).get('/docs/openapi.json').expect(200);
    expect(doc.body.info).toMatchObject({ title: 'Widgets', version: '9.9.9' });
    expect(Object.keys(doc.body.paths)).toContain('/widgets');
    const metrics = await request(server).get('/metrics').expect(200);
    expect(metrics.text).toContain('http_requests_total');
  });

  it('migrateService applies nothing twice', async () => {
    const saved = process.env.WIDGET_DATABASE_URL;
    process.env.WIDGET_DATABASE_URL = db.url;
    const lines: string[] = [];
    const write = process.stdout.write.bind(process.stdout);
    process.stdout.write = ((chunk: string) => {
      lines.push(String(chunk));
      return true;
    }) as typeof process.stdout.write;
    try {
      await migrateService(definition);
    } finally {
      process.stdout.write = write;
      process.env.WIDGET_DATABASE_URL = saved;
    }
    expect(lines.join('')).toContain('migrations applied: []');
  });
});
