"""The Pulumi program of this project: `pulumi up` reads stacks/Pulumi.<stack>.yaml."""

from trainjobs.components import program

program()
