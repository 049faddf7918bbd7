// A local module the graph imports: jetgraph bundles it with the graph.
export function greeting(name: string, visits: number): string {
  return `hello ${name} (visit ${visits})`;
}
