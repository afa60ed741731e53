import { mapError } from '@gatehouse/http';
// Loading the module registers its translator with the HTTP foundation, as `@gatehouse/db` does in a service.
import './pg-errors.js';

describe('mapError with the PostgreSQL translator', () => {
  it('maps PostgreSQL errors, also wrapped as TypeORM QueryFailedError', () => {
    const pgErr = Object.assign(
      new Error('duplicate key value violates unique constraint "uq_client_name"'),
      {
        code: '23505',
        severity: 'ERROR',
        detail: 'Key (name)=(secret value) already exists.',
      },
    );
    const typeorm = Object.assign(new Error(pgErr.message), {
      name: 'QueryFailedError',
      query: 'INSERT ...',
      driverError: pgErr,
    });
    for (const e of [pgErr, typeorm]) {
      const m = mapError(e);
      expect(m).toMatchObject({
        status: 409,
        body: { code: 'conflict', message: 'A record with the same name already exists' },
      });
      expect(JSON.stringify(m)).not.toContain('secret value');
    }
  });

  it('answers a lost database connection with 503', () => {
    expect(mapError(new Error('Connection terminated unexpectedly')).status).toBe(503);
  });
});
