import { Body, Controller, Delete, Get, HttpCode, NotFoundException, Param, ParseUUIDPipe, Post, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, Length, Matches } from 'class-validator';
import { adminTokenGuard } from '@tollgate/http';
import { LEDGER_ADMIN } from '../ledger.constants';
import { FinanceTokensUseCase } from './finance-tokens.usecase';

export class IssueFinanceTokenDto {
  /** `finance` (read-only finance views, the default) or `operator` (also operation keys and payment signatures). */
  @IsOptional() @IsIn(['finance', 'operator']) role?: 'finance' | 'operator';
  /** Limits a finance token to one owner's accounts and calls. */
  @IsOptional() @IsString() @Matches(/^[\x21-\x7e]{1,100}$/) ownerId?: string;
  @IsString() @Length(1, 200) label!: string;
}

/** Admin: finance and operator tokens of the finance API. A token is shown once, when issued. */
@ApiTags('admin')
@ApiBearerAuth()
@Controller('admin/finance-tokens')
@UseGuards(adminTokenGuard(LEDGER_ADMIN))
export class FinanceTokensController {
  constructor(private readonly tokens: FinanceTokensUseCase) {}

  @Post()
  issue(@Body() dto: IssueFinanceTokenDto) {
    return this.tokens.issue(dto.role ?? 'finance', dto.ownerId ?? null, dto.label);
  }

  @Get()
  async list() {
    return { tokens: await this.tokens.list() };
  }

  @Delete(':tokenId')
  @HttpCode(200)
  async revoke(@Param('tokenId', new ParseUUIDPipe()) tokenId: string) {
    if (!(await this.tokens.revoke(tokenId))) throw new NotFoundException({ code: 'FINANCE_TOKEN_NOT_FOUND', message: 'No active token has this id.' });
    return { tokenId, revoked: true };
  }
}
