import { Controller, Get, NotFoundException, Param, ParseIntPipe, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { adminTokenGuard } from '@tollgate/http';
import { LEDGER_ADMIN } from '../ledger.constants';
import { VerifyArchiveUseCase } from './verify-archive.usecase';

/** Ops: the event archive's integrity. */
@ApiTags('admin')
@ApiBearerAuth()
@Controller('admin/archive')
@UseGuards(adminTokenGuard(LEDGER_ADMIN))
export class ArchiveController {
  constructor(private readonly archive: VerifyArchiveUseCase) {}

  @Get('verify')
  @ApiOkResponse({ description: '{ ok, rows, head: { position, hash }, problem? } — the first gap, broken link or hash mismatch.' })
  verify() {
    return this.archive.verify();
  }

  /** One archived event by position (its hash, to check a head recorded earlier). */
  @Get('positions/:position')
  async at(@Param('position', ParseIntPipe) position: number) {
    const row = await this.archive.at(position);
    if (!row) throw new NotFoundException({ code: 'ARCHIVE_POSITION_NOT_FOUND', message: 'No archived event at this position.' });
    return row;
  }
}
