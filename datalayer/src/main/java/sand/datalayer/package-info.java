/** Local data layer (in-memory KV over Thrift) and the Cassandra global data layer (paper 4.3). */
package sand.datalayer;
