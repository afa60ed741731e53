import { Inject, Injectable, type CanActivate } from '@nestjs/common';
import { DomainError, ErrorCode } from '@gatehouse/errors';
import { SERVICE_ENV } from '@gatehouse/service';

/**
 * Without multi-instance mode (MULTI_INSTANCE unset or false) every instance operation answers 501
 * `not_implemented`. It runs after the bearer guard (a missing or bad token is still 401, a missing scope 403) and
 * before the body and path are read, so the answer does not depend on them.
 */
@Injectable()
export class MultiInstanceGuard implements CanActivate {
  constructor(@Inject(SERVICE_ENV) private readonly env: { MULTI_INSTANCE?: boolean }) {}

  canActivate(): boolean {
    if (this.env.MULTI_INSTANCE === true) return true;
    throw new DomainError(
      ErrorCode.NotImplemented,
      'Instances need multi-instance mode: this service runs with MULTI_INSTANCE=false',
    );
  }
}
