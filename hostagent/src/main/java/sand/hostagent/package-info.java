/** Host agent: sandboxes, grain workers, global bus bridge, condition flags (paper 4.1, 4.2). */
package sand.hostagent;
