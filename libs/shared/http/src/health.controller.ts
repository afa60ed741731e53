import { Controller, Get, Inject, Res } from '@nestjs/common';
import { ApiExcludeEndpoint, ApiOkResponse, ApiProperty, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { serviceUnavailable } from '@gatehouse/errors';
import type { Logger } from 'pino';
import type { HttpMetrics } from './metrics.js';
import { ApiErrorResponses, Public } from './openapi.js';

/** Injection token of the foundation's runtime parts (see create-app.ts). */
export const HTTP_FOUNDATION = Symbol('HTTP_FOUNDATION');

export interface HttpFoundation {
  serviceName: string;
  logger: Logger;
  metrics: HttpMetrics;
  readiness: () => Promise<void>;
  readinessTimeoutMs: number;
  close: () => Promise<void>;
}

export class HealthStatusDto {
  @ApiProperty({ example: 'ok' })
  status: string;
}

/** Probes and the Prometheus scrape: public, not rate limited. */
@ApiTags('health')
@Public()
@Controller()
export class HealthController {
  constructor(@Inject(HTTP_FOUNDATION) private readonly foundation: HttpFoundation) {}

  @Get('livez')
  @ApiOkResponse({ type: HealthStatusDto, description: 'The process is up' })
  livez(): HealthStatusDto {
    return { status: 'ok' };
  }

  @Get('readyz')
  @ApiOkResponse({ type: HealthStatusDto, description: 'The database answers' })
  @ApiErrorResponses(503)
  async readyz(): Promise<HealthStatusDto> {
    const { readiness, readinessTimeoutMs, logger } = this.foundation;
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        readiness(),
        new Promise((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`readiness check timed out after ${readinessTimeoutMs} ms`)),
            readinessTimeoutMs,
          );
        }),
      ]);
    } catch (err) {
      logger.warn({ err }, 'Readiness check failed');
      throw serviceUnavailable('Not ready: the database does not answer');
    } finally {
      clearTimeout(timer);
    }
    return { status: 'ok' };
  }

  @Get('metrics')
  @ApiExcludeEndpoint()
  async metrics(@Res() res: Response): Promise<void> {
    const { metrics } = this.foundation;
    const body = await metrics.text();
    res.setHeader('Cache-Control', 'no-store');
    res.type(metrics.contentType()).send(body);
  }
}
