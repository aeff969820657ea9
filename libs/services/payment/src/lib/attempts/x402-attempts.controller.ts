import { Controller, Get, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { adminTokenGuard } from '@tollgate/http';
import { PAYMENT, PAYMENT_ADMIN } from '../payment.constants';
import { X402Attempts } from './x402-attempts.repository';

/**
 * x402 payments still open, for ops: verifying, settling, and those with no verdict yet (the facilitator gave no
 * answer, or a claim the chain did not confirm, or the chain could not be read). None of them is credited or refused
 * until the chain says which; each is asked again on its own schedule.
 */
@ApiTags('x402')
@ApiBearerAuth()
@Controller('admin/x402/attempts')
@UseGuards(adminTokenGuard(PAYMENT_ADMIN))
export class X402AttemptsController {
  constructor(@InjectDataSource(PAYMENT) private readonly dataSource: DataSource) {}

  @Get()
  async open() {
    return { attempts: await X402Attempts.listOpen(this.dataSource) };
  }
}
