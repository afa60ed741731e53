import { Module } from '@nestjs/common';
import { CsvController } from './csv.controller.js';
import { CsvService } from './csv.service.js';

/** CSV export and import of a version. */
@Module({
  imports: [],
  controllers: [CsvController],
  providers: [CsvService],
  exports: [CsvService],
})
export class CsvModule {}
