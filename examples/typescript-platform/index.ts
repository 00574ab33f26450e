// The program as `pulumi up` runs it with Pulumi's Node.js host (official Pulumi): the
// stack's outputs are platform()'s.
import { platform } from "./platform";

const outputs = platform();
export const mnistAddresses = outputs.mnistAddresses;
export const bertObjects = outputs.bertObjects;
export const redisAddress = outputs.redisAddress;
