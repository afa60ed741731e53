import { Db } from '@gatehouse/db';
import { Inject, Injectable } from '@nestjs/common';
import { defineRecord } from '@gatehouse/query';
import { packageVersion, SERVICE_ENV } from '@gatehouse/service';

export const healthSpec = defineRecord({
  name: 'health record',
  attributes: [
    { name: 'server_name', column: 'server_name', type: 'string' },
    { name: 'server_version', column: 'server_version', type: 'string' },
    { name: 'server_status', column: 'server_status', type: 'string' },
    { name: 'server_description', column: 'server_description', type: 'string' },
  ],
});

export type ServerStatus = 'Active' | 'Warning' | 'Error';

export interface HealthRecord {
  server_name: string;
  server_version: string;
  server_status: ServerStatus;
  server_description: string;
}

/** How long each component may take to answer. */
const PROBE_TIMEOUT_MS = 1500;

/**
 * Status of this instance: `Error` when the database cannot be reached, `Warning` when only the token server cannot
 * (tokens still in the validation cache keep working), else `Active`. The description names each component.
 */
@Injectable()
export class HealthService {
  private readonly version = packageVersion();

  constructor(
    @Inject(Db) private readonly db: Db,
    @Inject(SERVICE_ENV) private readonly env: { AUTH_URL: string },
  ) {}

  async check(): Promise<HealthRecord> {
    const [database, tokenServer] = await Promise.all([this.database(), this.tokenServer()]);
    const status: ServerStatus = !database ? 'Error' : !tokenServer ? 'Warning' : 'Active';
    return {
      server_name: 'gatehouse-tree',
      server_version: this.version,
      server_status: status,
      server_description: `Gatehouse tree manager; database: ${database ? 'reachable' : 'unreachable'}; token server: ${
        tokenServer ? 'reachable' : 'unreachable'
      }`,
    };
  }

  private async database(): Promise<boolean> {
    return this.db.check(PROBE_TIMEOUT_MS).then(
      () => true,
      () => false,
    );
  }

  /** The token server answers its discovery document. */
  private async tokenServer(): Promise<boolean> {
    const base = this.env.AUTH_URL.endsWith('/') ? this.env.AUTH_URL : `${this.env.AUTH_URL}/`;
    try {
      const res = await fetch(new URL('.well-known/openid-configuration', base), {
        signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
        redirect: 'error',
      });
      await res.body?.cancel().catch(() => undefined);
      return res.ok;
    } catch {
      return false;
    }
  }
}
