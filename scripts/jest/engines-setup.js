// Placeholder until the engine scripts land: uses MONGO_URL / KAFKA_BROKERS when set.
module.exports = async () => {};
