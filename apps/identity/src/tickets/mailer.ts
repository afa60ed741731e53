import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { Db } from '@gatehouse/db';
import { Delivery, type DeliveryEnv } from '@gatehouse/delivery';
import { SERVICE_ENV } from '@gatehouse/service';

/**
 * The messages the management API sends (invitations), through the delivery outbox exactly as the token server
 * sends its codes (the same @gatehouse/delivery): queued in the caller's transaction, delivered after the answer by
 * this service's worker (its own queue, `identity`: SMTP_URL, SMS_WEBHOOK_URL, or DATA_DIR/outbox/).
 */
@Injectable()
export class Mailer implements OnApplicationBootstrap, OnApplicationShutdown {
  readonly delivery: Delivery;
  private readonly log = new Logger('Mailer');

  constructor(@Inject(SERVICE_ENV) env: DeliveryEnv, @Inject(Db) db: Db) {
    this.delivery = new Delivery(
      env,
      {
        info: (obj, msg) => this.log.log({ ...obj, msg }),
        warn: (obj, msg) => this.log.warn({ ...obj, msg }),
      },
      db,
      { queue: 'identity' },
    );
  }

  onApplicationBootstrap(): void {
    this.delivery.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.delivery.close();
  }
}
