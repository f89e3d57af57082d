/** Internal: the Engine's HTTP transport, the application folder, safe unzip, pip. Not an API; may change. */
package sand.hostagent.sandbox.internal;
