export { createKafkaBus, type KafkaBusOptions } from './kafka-bus';
