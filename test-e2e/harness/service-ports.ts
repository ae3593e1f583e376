import { SERVICE_PORT_NAMES, servicePortsFrom, type ServicePorts } from '@gw/local-stack/src/service-addresses';
import { freePort } from './ports';

export { serviceAddressEnv, type ServicePorts } from '@gw/local-stack/src/service-addresses';

/** A free loopback port (from this jest worker's block) for every port a stack of all the services listens on. */
export async function freeServicePorts(): Promise<ServicePorts> {
  return servicePortsFrom(await Promise.all(SERVICE_PORT_NAMES.map(() => freePort())));
}
