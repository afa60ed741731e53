import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, MaxLength } from 'class-validator';
import { LANGUAGES } from '../../common/language.js';

export class CreateTranslationDto {
  @ApiPropertyOptional({ enum: LANGUAGES, default: 'en_US', description: '`mn-MN` is accepted for `mn_MN`' })
  @IsOptional()
  @IsString()
  @IsIn([...LANGUAGES, 'en-US', 'en-UK', 'en-GB', 'mn-MN'], {
    message: `language must be one of ${LANGUAGES.join(', ')}`,
  })
  language?: string;

  @ApiPropertyOptional({ type: String, nullable: true, description: 'Translated name (label name)' })
  @IsOptional()
  @IsString()
  @MaxLength(255)
  name?: string | null;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    description: 'Translated description (label description)',
  })
  @IsOptional()
  @IsString()
  @MaxLength(4000)
  description?: string | null;
}

export class UpdateTranslationDto {
  @ApiPropertyOptional({ type: String, nullable: true })
  @IsOptional()
  @IsString()
  @MaxLength(255)
  name?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true })
  @IsOptional()
  @IsString()
  @MaxLength(4000)
  description?: string | null;
}
