/** Frontend server: developer REST API and user requests, embedded Jetty (paper 4.3). */
package sand.frontend;
