import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { Db } from '@gatehouse/db';
import { startEventHousekeeping } from '@gatehouse/identity-data';
import { SERVICE_ENV } from '@gatehouse/service';

/**
 * The events table's partitions made ahead (before the service serves, then hourly) and those past
 * EVENTS_RETENTION_DAYS dropped, by one identity replica at a time (startEventHousekeeping).
 */
@Injectable()
export class EventHousekeeping implements OnApplicationBootstrap, OnApplicationShutdown {
  private stop: (() => void) | undefined;
  private readonly log = new Logger('EventHousekeeping');

  constructor(
    @Inject(Db) private readonly db: Db,
    @Inject(SERVICE_ENV) private readonly env: { EVENTS_RETENTION_DAYS: number },
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    this.stop = await startEventHousekeeping(this.db, {
      retentionDays: this.env.EVENTS_RETENTION_DAYS,
      warn: (msg, err) => this.log.warn(`${msg}: ${(err as Error).message}`),
      info: (msg, fields) => this.log.log(`${msg}: ${JSON.stringify(fields)}`),
    });
  }

  onApplicationShutdown(): void {
    this.stop?.();
  }
}
