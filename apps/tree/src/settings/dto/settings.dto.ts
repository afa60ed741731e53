import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';

export const ENVIRONMENTS = ['development', 'staging', 'production'] as const;
export type Environment = (typeof ENVIRONMENTS)[number];

export class UpdateSettingsDto {
  @ApiPropertyOptional({ enum: ENVIRONMENTS, default: 'development' })
  @IsOptional()
  @IsIn(ENVIRONMENTS, { message: `environment must be one of ${ENVIRONMENTS.join(', ')}` })
  environment?: Environment;
}
