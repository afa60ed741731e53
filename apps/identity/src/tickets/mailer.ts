import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { Delivery, type DeliveryEnv } from '@gatehouse/delivery';
import { SERVICE_ENV } from '@gatehouse/service';

/**
 * The messages the management API sends (invitations): SMTP_URL, SMS_WEBHOOK_URL, or DATA_DIR/outbox/ and the log,
 * exactly as the token server sends its codes (the same @gatehouse/delivery).
 */
@Injectable()
export class Mailer implements OnApplicationShutdown {
  readonly delivery: Delivery;
  private readonly log = new Logger('Mailer');

  constructor(@Inject(SERVICE_ENV) env: DeliveryEnv) {
    this.delivery = new Delivery(env, {
      info: (obj, msg) => this.log.log({ ...obj, msg }),
      warn: (obj, msg) => this.log.warn({ ...obj, msg }),
    });
  }

  onApplicationShutdown(): void {
    this.delivery.close();
  }
}
