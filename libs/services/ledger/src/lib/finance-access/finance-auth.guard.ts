import { type CanActivate, createParamDecorator, type ExecutionContext, Injectable, UnauthorizedException } from '@nestjs/common';
import { type Request } from 'express';
import { bearerSecret } from '@tollgate/http';
import { type FinanceCaller } from './finance-caller';
import { FinanceTokensUseCase } from './finance-tokens.usecase';

type WithCaller = Request & { financeCaller?: FinanceCaller };

/** Every finance route: `Authorization: Bearer <finance or operator token>`; the caller is attached to the request. */
@Injectable()
export class FinanceAuthGuard implements CanActivate {
  constructor(private readonly tokens: FinanceTokensUseCase) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const req = context.switchToHttp().getRequest<WithCaller>();
    const secret = bearerSecret(req.headers.authorization);
    const caller = secret ? await this.tokens.authenticate(secret) : undefined;
    if (!caller) throw new UnauthorizedException({ code: 'FINANCE_TOKEN_INVALID', message: 'A valid finance token is required (Authorization: Bearer <token>).' });
    req.financeCaller = caller;
    return true;
  }
}

/** The authenticated finance caller of a route guarded by FinanceAuthGuard. */
export const Caller = createParamDecorator((_: unknown, ctx: ExecutionContext): FinanceCaller => ctx.switchToHttp().getRequest<WithCaller>().financeCaller!);
