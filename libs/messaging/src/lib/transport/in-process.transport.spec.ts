import { describeTransportContract } from '../../../test/transport-contract';
import { InProcessTransport } from './in-process.transport';

describeTransportContract('in-process', async () => new InProcessTransport(), async () => ['test.contract.a.v1', 'test.contract.b.v1']);
