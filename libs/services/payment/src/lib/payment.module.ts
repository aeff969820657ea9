import { type DynamicModule, Module } from '@nestjs/common';
import { adminTokenProvider } from '@tollgate/http';
import { outboxWriterProvider } from '@tollgate/messaging';
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
import { SettleX402UseCase } from './settle-x402/settle-x402.usecase';
import { X402Payments } from './settle-x402/x402-payments';
import { SpendPolicyController } from './spend-policy/spend-policy.controller';
import { SpendPoliciesRepository } from './spend-policy/spend-policies.repository';
import { LocalFacilitator } from './x402/local-facilitator';
import { HttpFacilitator } from './x402/http-facilitator';
import { X402_FACILITATOR, type X402Facilitator } from './x402/x402.types';
import { type X402FacilitatorSetting } from './payment.options';

/** The configured facilitator; none when x402 is off (then no payment requirement is offered and x402 payments are refused). */
function facilitatorFor(setting: X402FacilitatorSetting): X402Facilitator | null {
  if (setting.kind === 'http') return new HttpFacilitator(setting.url, setting.timeoutMs, setting.token);
  if (setting.kind === 'local') return new LocalFacilitator();
  return null;
}

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
        outboxWriterProvider(PAYMENT_OUTBOX, PAYMENT),
        { provide: X402_FACILITATOR, useValue: facilitatorFor(options.x402Facilitator) },
        FundWalletUseCase,
        SpendPoliciesRepository,
        PlaceHoldUseCase,
        X402Payments,
        SettleX402UseCase,
        ResolveHoldUseCase,
        PaymentEventsHost,
      ],
    };
  }
}
