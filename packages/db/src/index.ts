export * from "./connection";
export * from "./ferretdb";
export * from "./outage";
