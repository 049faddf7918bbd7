// The runtime API's shapes the Threads page reads (the fields it uses).
export {};
