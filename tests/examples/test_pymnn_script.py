"""A pymnn training script (MNN's pymnn/examples/MNNTrain/mnist/train_mnist.py, its
structure and calls kept, MNIST replaced by the bundled digits) runs unchanged with
``import mnn as MNN``: Dataset of Var lists, DataLoader.next(), F.one_hot, softmax
outputs with nn.loss.cross_entropy, opt.step, loss.read(), F.argmax, F.save."""
import numpy as np

import mnn as MNN
from mnn.examples.train_digits import load_digits

nn = MNN.nn
F = MNN.expr


class DigitsDataset(MNN.data.Dataset):
    def __init__(self, images, labels):
        super(DigitsDataset, self).__init__()
        self.data, self.labels = images, labels

    def __getitem__(self, index):
        dv = F.const(self.data[index].flatten().tolist(), [1, 28, 28], F.data_format.NCHW)
        dl = F.const([self.labels[index]], [], F.data_format.NCHW, F.dtype.uint8)
        return [dv], [dl]

    def __len__(self):
        return len(self.labels)


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.conv(1, 8, [5, 5])
        self.conv2 = nn.conv(8, 16, [5, 5])
        self.fc1 = nn.linear(256, 64)
        self.fc2 = nn.linear(64, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.max_pool(x, [2, 2], [2, 2])
        x = F.relu(self.conv2(x))
        x = F.max_pool(x, [2, 2], [2, 2])
        x = F.convert(x, F.NCHW)
        x = F.reshape(x, [0, -1])
        x = F.relu(self.fc1(x))
        x = self.fc2(x)
        x = F.softmax(x, 1)
        return x


def test_func(net, test_dataloader):  # noqa: PT028 - pymnn's function, called below
    net.train(False)
    test_dataloader.reset()
    correct = 0
    for i in range(test_dataloader.iter_number):
        example = test_dataloader.next()
        data, label = example[0][0], example[1][0]
        predict = F.argmax(net.forward(data), 1)
        correct += np.sum(np.array(label.read()) == np.array(predict.read()))
    return correct / test_dataloader.size


test_func.__test__ = False  # a helper of the script, not a test


def test_pymnn_mnist_script_trains(tmp_path):
    MNN.nn.init.seed(0)
    (x_train, y_train), (x_test, y_test) = load_digits()
    model = Net()
    train_dataloader = MNN.data.DataLoader(DigitsDataset(x_train, y_train), batch_size=64,
                                           shuffle=True)
    test_dataloader = MNN.data.DataLoader(DigitsDataset(x_test, y_test), batch_size=100,
                                          shuffle=False)
    opt = MNN.optim.SGD(model, 0.05, 0.9, 0.0005)
    F.set_thread_number(1)
    losses = []
    for epoch in range(3):
        model.train(True)
        train_dataloader.reset()
        for i in range(train_dataloader.iter_number):
            example = train_dataloader.next()
            data, label = example[0][0], example[1][0]
            predict = model.forward(data)
            target = F.one_hot(F.cast(label, F.int), 10, 1, 0)
            loss = nn.loss.cross_entropy(predict, target)
            opt.step(loss)
            losses.append(float(loss.read()))
    assert np.mean(losses[-10:]) < 0.5 * np.mean(losses[:10])
    assert test_func(model, test_dataloader) > 0.8
    F.save(model.parameters, str(tmp_path / "temp.snapshot"))
    model2 = Net()
    model2.load_parameters(F.load_as_list(str(tmp_path / "temp.snapshot")))
    assert test_func(model2, test_dataloader) == test_func(model, test_dataloader)
