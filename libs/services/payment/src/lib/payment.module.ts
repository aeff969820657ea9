import { type DynamicModule, Module } from '@nestjs/common';
import { type ServiceRuntimeOptions } from '@tollgate/config';
import { OutboxWriter } from '@tollgate/messaging';
import { serviceDatabaseModule } from '@tollgate/persistence';
import { paymentDataSourceOptions } from './payment.datasource-options';
import { PAYMENT, PAYMENT_OPTIONS, PAYMENT_OUTBOX } from './payment.constants';
import { PaymentEventsHost } from './payment-events.host';
import { PlaceHoldUseCase } from './place-hold/place-hold.usecase';
import { ResolveHoldUseCase } from './resolve-hold/resolve-hold.usecase';

/** Payment: wallets, holds, spend policy. Emits PaymentHeld / PaymentRejected; consumes CallRequested and settlement outcomes. */
@Module({})
export class PaymentModule {
  static register(options: ServiceRuntimeOptions): DynamicModule {
    return {
      module: PaymentModule,
      imports: [serviceDatabaseModule(PAYMENT, () => paymentDataSourceOptions(options.databaseUrl))],
      providers: [
        { provide: PAYMENT_OPTIONS, useValue: options },
        { provide: PAYMENT_OUTBOX, useValue: new OutboxWriter(PAYMENT, PAYMENT) },
        PlaceHoldUseCase,
        ResolveHoldUseCase,
        PaymentEventsHost,
      ],
    };
  }
}
