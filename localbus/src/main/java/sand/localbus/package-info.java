/** Local message bus: named FIFO queues served over Thrift (paper 4.1). */
package sand.localbus;
