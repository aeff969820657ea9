import { Body, Controller, Get, HttpCode, NotFoundException, Param, Post, Res, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsString, Length, Matches, ValidateNested } from 'class-validator';
import { type Response } from 'express';
import { POSITIVE_AMOUNT_MINOR_PATTERN } from '@tollgate/contracts';
import { adminTokenGuard } from '@tollgate/http';
import { PAYMENT_ADMIN } from '../payment.constants';
import { FundWalletUseCase } from './fund-wallet.usecase';

export class DepositAmountDto {
  @Matches(POSITIVE_AMOUNT_MINOR_PATTERN, { message: 'amountMinor must be a positive whole number of minor units (at most 15 digits), as a string' }) amountMinor!: string;
  @Matches(/^[A-Z][A-Z0-9]{1,11}$/, { message: 'asset must be an upper-case asset code such as USDC' }) asset!: string;
}

export class DepositDto {
  /** The external reference of the money received (bank transfer id…): the same reference credits once. */
  @IsString() @Length(1, 200) reference!: string;
  @ValidateNested() @Type(() => DepositAmountDto) amount!: DepositAmountDto;
}

/** Finance: prepaid wallets of agent owners. */
@ApiTags('wallets')
@ApiBearerAuth()
@Controller('admin')
@UseGuards(adminTokenGuard(PAYMENT_ADMIN))
export class WalletsController {
  constructor(private readonly wallets: FundWalletUseCase) {}

  @Post('owners/:ownerId/deposits')
  async deposit(@Param('ownerId') ownerId: string, @Body() dto: DepositDto, @Res({ passthrough: true }) res: Response) {
    const out = await this.wallets.deposit(ownerId, dto.reference, BigInt(dto.amount.amountMinor), dto.amount.asset);
    res.status(out.credited ? 201 : 200);
    return { ...out, reference: dto.reference, wallet: await this.wallets.wallet(ownerId) };
  }

  @Get('owners/:ownerId/wallet')
  wallet(@Param('ownerId') ownerId: string) {
    return this.wallets.wallet(ownerId);
  }

  @Post('deposits/:reference/chargeback')
  @HttpCode(200)
  async chargeback(@Param('reference') reference: string) {
    const out = await this.wallets.chargeback(reference);
    if (out === 'unknown') throw new NotFoundException({ code: 'DEPOSIT_NOT_FOUND', message: 'No deposit has this reference.' });
    return { reference, chargedBack: true, alreadyChargedBack: out === 'already' };
  }
}
