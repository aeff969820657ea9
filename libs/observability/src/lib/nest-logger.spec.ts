import { type Logger } from 'pino';
import { NestPinoLogger } from './nest-logger';

describe('NestPinoLogger', () => {
  it('puts Nest\'s start-up narration at debug and keeps what else it says at info', () => {
    const calls: [string, unknown, string][] = [];
    const at = (level: string) => (obj: unknown, msg: string) => void calls.push([level, obj, msg]);
    const logger = { info: at('info'), debug: at('debug') } as unknown as Logger;
    const nest = new NestPinoLogger(logger);
    nest.log('Mapped {/mcp/:slug, POST} route', 'RouterExplorer');
    nest.log('GatewayModule dependencies initialized', 'InstanceLoader');
    nest.log('something an operator should read', 'SomeService');
    expect(calls.map(([level, , msg]) => [level, msg])).toEqual([
      ['debug', 'Mapped {/mcp/:slug, POST} route'], ['debug', 'GatewayModule dependencies initialized'], ['info', 'something an operator should read']]);
  });
});
