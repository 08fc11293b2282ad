using LeaseSimulation.Cli;

return SimulationCommand.Execute(args, Console.Out, Console.Error);
