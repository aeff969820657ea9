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
import { AttemptsWake } from './attempts/attempts-wake';
import { HoldReads } from './place-hold/hold-reads';
import { PlaceHoldWorkflow } from './place-hold/place-hold.workflow';
import { HoldEndWorkflow } from './resolve-hold/hold-end.workflow';
import { AttemptSteps } from './place-hold/attempt-steps';
import { MppPayments } from './mpp/mpp-payments';
import { MppSteps } from './mpp/mpp-steps';
import { X402Payments } from './attempts/x402-payments';
import { X402AttemptsController } from './attempts/x402-attempts.controller';
import { SpendPolicyController } from './spend-policy/spend-policy.controller';
import { LocalChainState, LocalFacilitator } from './x402/local-facilitator';
import { RpcChainState } from './x402/rpc-chain-state';
import { type ChainState, X402_CHAIN } from './x402/chain-state';
import { HttpFacilitator } from './x402/http-facilitator';
import { X402_FACILITATOR, type X402Facilitator } from './x402/x402.types';
import { type X402FacilitatorSetting } from './payment.options';

/**
 * The configured facilitator and the chain its settlements are checked against; none when x402 is off (then no
 * payment requirement is offered and x402 payments are refused).
 */
function x402Of(setting: X402FacilitatorSetting): { facilitator: X402Facilitator | null; chain: ChainState | null } {
  if (setting.kind === 'http') {
    return {
      facilitator: new HttpFacilitator(setting.url, setting.timeoutMs, setting.token),
      chain: new RpcChainState({ url: setting.chainRpcUrl, timeoutMs: setting.timeoutMs, lookbackBlocks: setting.chainLookbackBlocks }),
    };
  }
  if (setting.kind === 'local') {
    const facilitator = new LocalFacilitator();
    return { facilitator, chain: new LocalChainState(facilitator) };
  }
  return { facilitator: null, chain: null };
}

/**
 * Payment: wallets (double-entry balances), holds, spend policy, approvals,
 * x402. Emits PaymentHeld / PaymentRejected / WalletFunded; consumes
 * CallRequested and settlement outcomes.
 */
@Module({})
export class PaymentModule {
  static register(options: PaymentOptions): DynamicModule {
    const x402 = x402Of(options.x402Facilitator);
    return {
      module: PaymentModule,
      imports: [serviceDatabaseModule(PAYMENT, () => paymentDataSourceOptions(options.databaseUrl))],
      controllers: [WalletsController, SpendPolicyController, ApprovalsController, X402AttemptsController],
      providers: [
        { provide: PAYMENT_OPTIONS, useValue: options },
        adminTokenProvider(PAYMENT_ADMIN, options.adminToken),
        outboxWriterProvider(PAYMENT_OUTBOX, PAYMENT),
        { provide: X402_FACILITATOR, useValue: x402.facilitator },
        { provide: X402_CHAIN, useValue: x402.chain },
        FundWalletUseCase,
        AttemptsWake,
        HoldReads,
        PlaceHoldWorkflow,
        X402Payments,
        MppPayments,
        MppSteps,
        AttemptSteps,
        HoldEndWorkflow,
        PaymentEventsHost,
      ],
    };
  }
}
