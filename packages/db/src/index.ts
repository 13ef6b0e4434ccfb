export * from "./connection";
export * from "./ferretdb";
export * from "./outage";
export * from "./id-chain";
export * from "./duplicate-key";
export * from "./models";
