import { createLogger } from '@tollgate/observability';
import { ensureTopics, TEST_KAFKA_BROKERS, uniqueName } from '@tollgate/testing';
import { describeTransportContract } from './transport-contract';
import { KafkaTransport } from '../src';

jest.setTimeout(60_000);
const logger = createLogger('kafka-contract-test', 'silent');

describeTransportContract(
  'kafka',
  async () => new KafkaTransport({ clientId: 'contract-test', brokers: TEST_KAFKA_BROKERS, logger }),
  async () => {
    const base = uniqueName('contract').replace(/_/g, '-');
    const topics = [`test.${base}.a.v1`, `test.${base}.b.v1`];
    await ensureTopics(topics);
    return topics;
  },
);
