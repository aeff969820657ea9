import { type DynamicModule, Module } from '@nestjs/common';
import { adminTokenProvider } from '@tollgate/http';
import { OutboxWriter } from '@tollgate/messaging';
import { serviceDatabaseModule } from '@tollgate/persistence';
import { ApprovalsController } from './approve-call/approvals.controller';
import { FundWalletUseCase } from './fund-wallet/fund-wallet.usecase';
import { WalletsController } from './fund-wallet/wallets.controller';
import { paymentDataSourceOptions } from './payment.datasource-options';
import { PAYMENT, PAYMENT_ADMIN, PAYMENT_OPTIONS, PAYMENT_OUTBOX } from './payment.constants';
import { PaymentEventsHost } from './payment-events.host';
import { type PaymentOptions } from './payment.options';
import { PlaceHoldUseCase } from './place-hold/place-hold.usecase';
import { ResolveHoldUseCase } from './resolve-hold/resolve-hold.usecase';
import { SpendPolicyController } from './spend-policy/spend-policy.controller';
import { LocalFacilitator } from './x402/local-facilitator';
import { X402_FACILITATOR } from './x402/x402.types';

/**
 * Payment: wallets (double-entry balances), holds, spend policy, approvals,
 * x402. Emits PaymentHeld / PaymentRejected / WalletFunded; consumes
 * CallRequested and settlement outcomes.
 */
@Module({})
export class PaymentModule {
  static register(options: PaymentOptions): DynamicModule {
    return {
      module: PaymentModule,
      imports: [serviceDatabaseModule(PAYMENT, () => paymentDataSourceOptions(options.databaseUrl))],
      controllers: [WalletsController, SpendPolicyController, ApprovalsController],
      providers: [
        { provide: PAYMENT_OPTIONS, useValue: options },
        adminTokenProvider(PAYMENT_ADMIN, options.adminToken),
        { provide: PAYMENT_OUTBOX, useValue: new OutboxWriter(PAYMENT, PAYMENT) },
        // No chain is reachable from here: the local facilitator verifies and records payments itself.
        { provide: X402_FACILITATOR, useValue: new LocalFacilitator() },
        FundWalletUseCase,
        PlaceHoldUseCase,
        ResolveHoldUseCase,
        PaymentEventsHost,
      ],
    };
  }
}
