/**
 * The KNIX door (docs/knix.md): {@link sand.frontend.knix.KnixManagement} answers KNIX MicroFunctions' management
 * actions through a table of actions ({@code KnixActions}), one class per resource (accounts, functions, workflows,
 * storage); {@link sand.frontend.knix.KnixExecutions} is a KNIX workflow's execution endpoint.
 */
package sand.frontend.knix;
