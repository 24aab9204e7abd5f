// Inventory: std::random_device, which uses RDRAND where the CPU has it.
#include <iostream>
#include <random>

int main()
{
	std::random_device rd;
	std::cout << "random_device " << rd() << " " << rd() << " " << rd() << "\n";
	return 0;
}
